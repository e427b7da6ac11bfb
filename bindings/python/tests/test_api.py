# The package's face: version, names, reprs, docstrings, stubs; the raw SWIG layer stays private.
import os
import re

import rig


def test_version_is_the_librarys():
    assert re.match(r"^\d+\.\d+\.\d+", rig.__version__)
    assert rig.version() == rig.__version__


def test_public_names_are_the_layer_not_the_raw_api():
    public = [n for n in dir(rig) if not n.startswith("_")]
    assert not [n for n in public if n.startswith("rig_") or n.startswith("RIG_")]
    assert set(rig.__all__) <= set(dir(rig))
    assert rig._rig.__name__ == "rig._rig"  # the raw layer, importable but private


def test_reprs_say_what_an_object_is(device):
    assert re.match(r"<rig.Device 'test' kind=memory submitted=0 signaled=0>", repr(device)), repr(device)
    buf = rig.Buffer.create(device, 12)
    assert repr(buf) == "<rig.Buffer 12 bytes on 'test'>"
    assert "read-only" in repr(rig.Buffer.wrap(b"x"))
    buf.close()
    assert repr(buf) == "<rig.Buffer closed>"
    assert repr(rig.copy(0, 1)).startswith("rig.copy(0, 1")


def test_every_public_name_is_documented():
    undocumented = []
    for name in rig.__all__:
        obj = getattr(rig, name)
        if callable(obj) and not (getattr(obj, "__doc__", None) or "").strip():
            undocumented.append(name)
    assert undocumented == []


def test_stubs_and_marker_ship_with_the_package():
    here = os.path.dirname(rig.__file__)
    assert os.path.isfile(os.path.join(here, "py.typed"))
    with open(os.path.join(here, "__init__.pyi")) as f:
        stubs = f.read()
    missing = [n for n in rig.__all__ if not re.search(r"\b%s\b" % re.escape(n), stubs)]
    assert missing == []

