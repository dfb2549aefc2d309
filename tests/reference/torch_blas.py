"""torch_blas.py: the OpenBLAS that torch loaded, for the bench scripts.

torch.set_num_threads(N) sets torch's own (OpenMP) threads; it does not
reach OpenBLAS's pool, which has one thread per core by default. So a
"1 thread" PyTorch runs its matrix products on every core unless the pool
is pinned. pin_blas_threads() pins it (the bench scripts' --blas-threads)
and says how many threads it runs.
"""
import ctypes


def openblas():
    """ctypes handle of the libopenblas mapped into this process, or None."""
    with open("/proc/self/maps") as f:
        for line in f:
            if "libopenblas" in line:
                return ctypes.CDLL(line.split()[-1])
    return None


def pin_blas_threads(n):
    """Set OpenBLAS's pool to n threads (n <= 0: leave it as installed);
    return the number it runs now (0 if torch uses another BLAS)."""
    lib = openblas()
    if lib is None:
        return 0
    if n > 0:
        lib.openblas_set_num_threads(n)
    return lib.openblas_get_num_threads()
