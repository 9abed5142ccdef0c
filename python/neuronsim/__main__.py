"""`python3 -m neuronsim sweep ARGS...` is `neuronsim sweep ARGS...`, and `python3 -m neuronsim nki-trace ...` the
tracing half of `neuronsim nki`: the C++ command runs these (sim/cli/main.cpp)."""
import sys

# Dask's local workers are spawned processes that import the parent's __main__ module again (as __mp_main__):
# only the real entry point runs the command.
if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "nki-trace":  # the tracing half of `neuronsim nki`
        from .nki.cli import main as nki_main

        sys.exit(nki_main(sys.argv[2:]))
    if len(sys.argv) < 2 or sys.argv[1] != "sweep":
        sys.stderr.write("usage: python3 -m neuronsim sweep KERNEL_OR_DIR... [options] (python3 -m neuronsim sweep "
                         "--help)\n")
        sys.exit(2)
    from .sweep_cli import main

    sys.exit(main(sys.argv[2:]))
