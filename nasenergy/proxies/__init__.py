"""Zero-cost proxies: cheap accuracy signals of untrained networks, next to FLOPs and params.

synflow (Tanaka et al. 2020), jacov (Mellor et al. 2020), NASWOT (Mellor et al. 2021), snip (Lee et
al. 2019) and grad_norm (Abdelfattah et al. 2021), each written from its paper's definition (see
each module), computed on any `nn.Module` (`compute_proxies`) or on the deployed network of a
search space's architecture (`compute_arch_proxies`), on the CPU or a GPU, seeded and timed.
`ProxyTable` reads a recorded table (``nasenergy/data/*_proxies.csv.gz``); `proxy_features` turns
a report into a feature vector for the filters (`nasenergy.filter.feature_providers`).

Public names are imported lazily: importing this package needs neither torch nor a GPU.
``python -m nasenergy.proxies --help`` prints the command line.
"""

from __future__ import annotations

from nasenergy._lazy import lazy_getattr

_EXPORTS = {
    "ProxyResult": "result",
    "ProxyValue": "result",
    "ProxyKind": "registry",
    "PROXIES": "registry",
    "register_proxy": "registry",
    "proxy_names": "registry",
    "ProxyContext": "_common",
    "ProxyBatch": "data",
    "make_batch": "data",
    "DATA_CHOICES": "data",
    "ProxyReport": "compute",
    "compute_proxies": "compute",
    "compute_arch_proxies": "compute",
    "ProxyTable": "table",
    "read_proxy_table": "table",
    "proxy_features": "features",
    "PROXY_FEATURE_NAMES": "features",
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_getattr(__name__, _EXPORTS)
