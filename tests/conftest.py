"""Project-wide test settings.

Tiny networks run far slower with several intra-op threads on a busy 2-core machine, so the test
suite pins torch to one thread unless the caller chose otherwise.
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
