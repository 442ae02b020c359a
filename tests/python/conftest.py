"""The worker's Python modules are embedded in `kj`; the tests import them from engine/worker directly."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "engine", "worker"))


def call_forward(session, recipe, sizes=None, check_inputs=False):
    """One checked call as the runner's C++ makes it (runner.cpp `forward`, runner_call.cpp): the inputs prepared,
    torch.nn.functional forbidden when the protocol asks, model(*inputs) with the collector off, its exception
    mapped by forward_error, then the input check. Returns (output, changed indices or None, overlap)."""
    import gc

    model, inputs, pristine = session.prepare_forward(recipe, sizes or {}, check_inputs)
    session.set_forbidden(True)
    was = gc.isenabled()
    gc.disable()
    try:
        output = model(*inputs)
    except BaseException as exc:  # noqa: BLE001 - the runner maps every exception
        raise session.forward_error(exc) from None
    finally:
        if was:
            gc.enable()
        session.set_forbidden(False)
    changed, overlap, _ = session.after_forward(output, model, inputs, pristine, check_inputs)
    return output, changed, overlap
