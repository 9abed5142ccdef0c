"""`python3 -m neuronsim sweep ARGS...` is `neuronsim sweep ARGS...`, `python3 -m neuronsim tune ARGS...` is `neuronsim
tune ARGS...`, and `python3 -m neuronsim nki-trace ...` the tracing half of `neuronsim nki`: the C++ command runs these
(sim/cli/main.cpp)."""
import sys

# Dask's local workers are spawned processes that import the parent's __main__ module again (as __mp_main__):
# only the real entry point runs the command.
if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "nki-trace":  # the tracing half of `neuronsim nki`
        # `python3 -m` puts the working directory first on sys.path: a folder there named nki/ or neuronxcc/ (the
        # folder of NKI kernels one runs from) would then shadow the names the front end serves. The package
        # itself comes from PYTHONPATH, and the kernel file's own folder is added when it is loaded.
        import os

        if sys.path and sys.path[0] in ("", os.getcwd()):
            del sys.path[0]
        from .nki.cli import main as nki_main

        sys.exit(nki_main(sys.argv[2:]))
    if len(sys.argv) >= 2 and sys.argv[1] == "tune":  # `neuronsim tune`: kernel files too (see nki-trace)
        import os

        if sys.path and sys.path[0] in ("", os.getcwd()):
            del sys.path[0]
        from .tune_cli import main as tune_main

        sys.exit(tune_main(sys.argv[2:]))
    if len(sys.argv) < 2 or sys.argv[1] != "sweep":
        sys.stderr.write("usage: python3 -m neuronsim sweep KERNEL_OR_DIR... [options] (python3 -m neuronsim sweep "
                         "--help), python3 -m neuronsim tune FILE.py::FUNCTION --param NAME=V1,V2 [options]\n")
        sys.exit(2)
    from .sweep_cli import main

    sys.exit(main(sys.argv[2:]))
