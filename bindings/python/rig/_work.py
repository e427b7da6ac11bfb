"""Submissions: parts of work over buffer slots, taken as runs and submitted in order of the memory used."""

from . import _rig
from ._buffers import WHOLE
from ._enums import Access
from ._owned import Owned
from ._point import point_of


class copy(object):
    """A part copying ``length`` bytes from slot ``src`` at ``src_offset`` to slot ``dst`` at
    ``dst_offset`` (WHOLE: to the end)."""

    def __init__(self, src, dst, length=WHOLE, src_offset=0, dst_offset=0):
        self.args = (src, src_offset, dst, dst_offset, length)

    def _add(self, parts, keep):
        return _rig.rig_swig_parts_copy(parts, *self.args)

    def __repr__(self):
        src, src_offset, dst, dst_offset, length = self.args
        return "rig.copy(%d, %d, length=%s, src_offset=%d, dst_offset=%d)" % (
            src, dst, "WHOLE" if length == WHOLE else length, src_offset, dst_offset)


class fill(object):
    """A part filling ``length`` bytes of slot ``dst`` from ``offset`` with ``byte``."""

    def __init__(self, dst, byte, length=WHOLE, offset=0):
        self.args = (dst, offset, length, byte)

    def _add(self, parts, keep):
        return _rig.rig_swig_parts_fill(parts, *self.args)

    def __repr__(self):
        dst, offset, length, byte = self.args
        return "rig.fill(%d, %d, length=%s, offset=%d)" % (dst, byte, "WHOLE" if length == WHOLE else length,
                                                           offset)


class host_kernel(object):
    """A part running fn(slots) on a memory device: slots is a list of memoryviews, one per slot of the
    submission (writable where the slot writes), valid only during fn. An exception fn raises is raised
    by the submit that ran it."""

    def __init__(self, fn):
        self.fn = fn

    def _add(self, parts, keep):
        keep.append(_rig.rig_py_parts_host_kernel(parts, self.fn))
        return 0

    def __repr__(self):
        return "rig.host_kernel(%r)" % (self.fn,)


class launch(object):
    """A part launching ``function`` of ``module`` (a Module) over ``grid`` x ``block`` with the given
    slot indices as its arguments."""

    def __init__(self, module, function, grid, block, slots, shared_bytes=0):
        self.module, self.function = module, function
        self.grid, self.block = tuple(grid) + (1,) * (3 - len(grid)), tuple(block) + (1,) * (3 - len(block))
        self.slots, self.shared_bytes = list(slots), shared_bytes

    def _add(self, parts, keep):
        keep.append(self.module)
        if _rig.rig_swig_parts_launch(parts, self.module._raw, self.function,
                                      *(self.grid + self.block + (self.shared_bytes,))):
            return -1
        for s in self.slots:
            if _rig.rig_swig_parts_launch_slot(parts, s):
                return -1
        return 0

    def __repr__(self):
        return "rig.launch(%r, %r, grid=%r, block=%r, slots=%r)" % (self.module, self.function, self.grid,
                                                                   self.block, self.slots)


class Submission(Owned):
    """Parts of some work for one device, over slots with the given access (Access per slot)."""

    _release_fn = staticmethod(_rig.rig_submission_release)

    def __init__(self, device, parts, access):
        self._device = device  # the device its runs' points are on
        keep = [device]  # its device lives while the submission (and its runs) may be submitted
        parts = list(parts)
        access = [Access(a) for a in access]
        p = _rig.rig_swig_parts_new()
        if p is None:
            raise MemoryError()
        try:
            for a in access:
                if _rig.rig_swig_parts_slot(p, int(a)):
                    raise MemoryError()
            for part in parts:
                if part._add(p, keep):
                    raise MemoryError()
            raw = _rig.rig_swig_submission_make(device._raw, p)
        finally:
            _rig.rig_swig_parts_free(p)
        Owned.__init__(self, raw, keep)
        self._summary = "%d part(s), %d slot(s)" % (len(parts), len(access))

    def take(self):
        """A Run of this submission: set its buffers, then submit it any number of times."""
        return Run(_rig.rig_run_take(self._raw), self)

    def __repr__(self):
        return "<rig.Submission %s%s>" % (self._summary, " closed" if self._released else "")


class Run(Owned):
    """A submission taken with a buffer table: set every slot, then submit (any number of times)."""

    _release_fn = staticmethod(_rig.rig_run_release)

    def __init__(self, raw, submission):
        Owned.__init__(self, raw, submission)  # the submission's kernels live while the run may call them

    def set_buffer(self, slot, buffer):
        _rig.rig_run_set_buffer(self._raw, slot, buffer._raw)

    def set_scalars(self, data):
        """The bytes a launch's kernel gets after its slots (any buffer)."""
        _rig.rig_run_set_scalars(self._raw, data)

    def submit(self, waits=()):
        """Submits the run after the points in ``waits`` (Points, or their ints); returns its Point."""
        return point_of(_rig.rig_submit(self._raw, [int(w) for w in waits]), self._keep._device)

    def __repr__(self):
        return "<rig.Run of %r%s>" % (self._keep, " closed" if self._released else "")


def submit_many(runs, waits=()):
    """Submits runs of one device at once, in order, after the points in ``waits``: consecutive values, each
    run ordered as if submitted alone after the ones before it (rig_submit_many). Returns their Points."""
    runs = list(runs)
    raws = [run._raw for run in runs]
    points = _rig.rig_py_submit_many(raws, [int(w) for w in waits])
    return [point_of(p, run._keep._device) for p, run in zip(points, runs)]


def submit(device, parts, slots, waits=()):
    """Makes, takes and submits in one call: slots is a list of (buffer, access). Returns the Point."""
    slots = list(slots)
    with Submission(device, parts, [a for _, a in slots]) as sub:
        with sub.take() as run:
            for i, (b, _) in enumerate(slots):
                run.set_buffer(i, b)
            return run.submit(waits)
