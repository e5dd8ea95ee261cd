"""The NATS-Bench search spaces: architectures, official order, canonical forms, networks, costs.

``tss`` (topology: 15,625 cells, identical to NAS-Bench-201) and ``sss`` (size: 32,768 width
configurations). Importing this package does no work and does not import torch::

    from search_spaces import get_space
    space = get_space("tss")
    arch = space.parse("|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_3x3~2|")
    space.index(arch), space.count(arch, "cifar10").flops, space.build(arch, "cifar100")
"""

from search_spaces._cost import ModelCost
from search_spaces._datasets import (
    DATASET_ALIASES,
    DATASETS,
    NATS_TRAINING_SETS,
    DatasetInfo,
    canonical_dataset,
    dataset_info,
    dataset_names,
    nats_dataset_name,
    register_dataset,
)
from search_spaces._network_spec import LayerSpec, NetworkSpec
from search_spaces._protocol import Arch, SpaceProtocol
from search_spaces._registry import SPACE_NAMES, get_space, register_space, space_names
from search_spaces._space import SearchSpace
from search_spaces._sss_arch import SSS_CHANNELS, SSSArch
from search_spaces._sss_space import SSS_CELL, SSSSpace
from search_spaces._tss_arch import TSS_EDGES, TSS_OPS, Edge, TSSArch
from search_spaces._tss_features import TSS_FEATURE_NAMES
from search_spaces._tss_paths import TSS_PATH_FEATURES
from search_spaces._tss_space import TSS_CHANNELS, TSSSpace


__all__ = [
    "DATASETS",
    "DATASET_ALIASES",
    "NATS_TRAINING_SETS",
    "SPACE_NAMES",
    "SSS_CELL",
    "SSS_CHANNELS",
    "TSS_CHANNELS",
    "TSS_EDGES",
    "TSS_FEATURE_NAMES",
    "TSS_PATH_FEATURES",
    "TSS_OPS",
    "Arch",
    "DatasetInfo",
    "Edge",
    "LayerSpec",
    "ModelCost",
    "NetworkSpec",
    "SSSArch",
    "SSSSpace",
    "SearchSpace",
    "SpaceProtocol",
    "TSSArch",
    "TSSSpace",
    "canonical_dataset",
    "dataset_info",
    "dataset_names",
    "get_space",
    "nats_dataset_name",
    "register_dataset",
    "register_space",
    "space_names",
]
