"""The PyTorch networks: shapes, structure, determinism, and torch-free import."""

from __future__ import annotations

import subprocess
import sys

import pytest

from search_spaces import DATASETS, get_space


@pytest.mark.parametrize("dataset", DATASETS)
@pytest.mark.parametrize("space_name", ["tss", "sss"])
def test_forward_gives_logits_per_dataset(space_name, dataset, torch_single_thread):
    torch = torch_single_thread
    space = get_space(space_name)
    channels, height, width = space.input_shape(dataset)
    assert (height, width) == ((16, 16) if dataset == "ImageNet16-120" else (32, 32)) and channels == 3
    for arch in space.sample(2, seed=DATASETS.index(dataset)):
        model = space.build(arch, dataset)
        assert not model.training
        with torch.no_grad():
            logits = model(torch.randn(3, channels, height, width, generator=torch.Generator().manual_seed(0)))
        assert logits.shape == (3, space.num_classes(dataset))
        assert torch.isfinite(logits).all()


def test_num_classes():
    tss = get_space("tss")
    assert [tss.num_classes(d) for d in DATASETS] == [10, 100, 120]
    assert tss.num_classes("cifar10-valid") == 10 and tss.input_shape("imagenet16-120") == (3, 16, 16)


def test_tss_network_structure(torch_single_thread):
    torch = torch_single_thread
    tss = get_space("tss")
    model = tss.build("|nor_conv_3x3~0|+|none~0|skip_connect~1|+|avg_pool_3x3~0|nor_conv_1x1~1|none~2|")
    kinds = [type(layer).__name__ for layer in model.layers]
    assert kinds == ["Cell"] * 5 + ["ReductionBlock"] + ["Cell"] * 5 + ["ReductionBlock"] + ["Cell"] * 5
    assert model.stem[0].out_channels == 16 and model.classifier.in_features == 64
    convs = [m for m in model.modules() if isinstance(m, torch.nn.Conv2d)]
    assert all(m.bias is None for m in convs)
    # stem + 15 cells x 2 convs + 2 reduction blocks x 3 convs
    assert len(convs) == 1 + 15 * 2 + 2 * 3


def test_zero_cell_outputs_depend_only_on_the_skeleton(torch_single_thread):
    """A cell of `none` edges outputs zeros, so the logits equal the classifier bias for any input."""
    torch = torch_single_thread
    tss = get_space("tss")
    model = tss.build("|none~0|+|none~0|none~1|+|none~0|none~1|none~2|", "cifar100")
    with torch.no_grad():
        a, b = model(torch.randn(2, 3, 32, 32)), model(torch.zeros(2, 3, 32, 32))
    assert torch.allclose(a, b)


def test_sss_network_widths(torch_single_thread):
    torch = torch_single_thread
    sss = get_space("sss")
    model = sss.build("8:16:24:32:40", "cifar10")
    assert [type(layer).__name__ for layer in model.layers] == ["Cell", "ReductionBlock", "Cell", "ReductionBlock", "Cell"]
    assert model.stem[0].out_channels == 8 and model.classifier.in_features == 40
    for layer, width in zip(model.layers, [8, 16, 24, 32, 40]):
        assert {m.out_channels for m in layer.modules() if isinstance(m, torch.nn.Conv2d)} == {width}


def test_build_is_seeded_and_leaves_global_rng_alone(torch_single_thread):
    torch = torch_single_thread
    tss = get_space("tss")
    arch = tss.arch_at(1)
    state = torch.random.get_rng_state()
    a, b, c = tss.build(arch, seed=1), tss.build(arch, seed=1), tss.build(arch, seed=2)
    assert torch.equal(torch.random.get_rng_state(), state)
    assert torch.equal(a.stem[0].weight, b.stem[0].weight)
    assert not torch.equal(a.stem[0].weight, c.stem[0].weight)


def test_import_does_not_import_torch_or_compute_tables():
    code = (
        "import sys, search_spaces\n"
        "from search_spaces import _tss_order, _tss_canonical\n"
        "space = search_spaces.get_space('tss'); arch = space.parse(" + repr(str(get_space("tss").arch_at(5))) + ")\n"
        "assert _tss_order.official_order.cache_info().currsize == 0\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
        "space.index(arch); space.canonical(arch); space.count(arch, 'cifar10'); space.features(arch)\n"
        "assert 'torch' not in sys.modules and 'optuna' not in sys.modules\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_op_semantics(torch_single_thread):
    from search_spaces._nets import make_op

    torch = torch_single_thread
    x = torch.ones(1, 4, 5, 5)
    assert torch.equal(make_op("avg_pool_3x3", 4, 4)(x), x)  # padding is excluded from the mean
    assert torch.equal(make_op("skip_connect", 4, 4)(x), x)
    assert torch.equal(make_op("none", 4, 4)(x), torch.zeros_like(x))
    assert make_op("none", 4, 8)(x).shape == (1, 8, 5, 5)
    conv = make_op("nor_conv_3x3", 4, 8)
    assert [type(m).__name__ for m in conv] == ["ReLU", "Conv2d", "BatchNorm2d"]
    assert conv[1].padding == (1, 1) and conv[1].stride == (1, 1)
    # skip and pooling edges that change width go through a 1x1 convolution
    assert [type(m).__name__ for m in make_op("skip_connect", 4, 8)] == ["Conv2d", "BatchNorm2d"]
    assert make_op("avg_pool_3x3", 4, 8).preprocess[1].kernel_size == (1, 1)
