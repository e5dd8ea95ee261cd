"""Training NATS-Bench networks on image data: the full evaluation a search pays for.

Usable on its own, beside the filter::

    from nasenergy.train import load_data, train_arch
    from search_spaces import get_space
    data = load_data("digits")
    result = train_arch(get_space("tss"), "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_3x3~2|",
                        data, recipe=TrainRecipe(epochs=2))
    result.val_accuracy_pct, result.train_s, result.energy_j

Public names (imported lazily: importing this package imports neither torch nor scikit-learn):
`TrainRecipe` and `NATS_RECIPE` (what a training computes), `TrainOptions` (how fast it runs),
`train_model`, `train_arch`, `build_for_data`, `TrainingResult`, `load_data`, `ImageData`,
`DataError`, `random_image_data`, `choose_slots`, `train_packed`, `TrainJob`.
"""

from __future__ import annotations

from nasenergy._lazy import lazy_getattr

_EXPORTS = {
    "TrainRecipe": "recipe",
    "NATS_RECIPE": "recipe",
    "TrainOptions": "options",
    "train_model": "trainer",
    "train_arch": "network",
    "build_for_data": "network",
    "TrainingResult": "result",
    "load_data": "data",
    "ImageData": "data",
    "DataError": "data",
    "random_image_data": "data_random",
    "choose_slots": "packing",
    "train_packed": "packing",
    "TrainJob": "packing",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_getattr(__name__, _EXPORTS)
