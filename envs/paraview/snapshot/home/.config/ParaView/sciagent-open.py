# Run by ``paraview --script`` at start-up: opens the task's inputs (SCIAGENT_OPEN, separated
# by os.pathsep) as File > Open and Apply would, so a task that starts with its data loaded
# shows it. ParaView refuses --data beside --script, hence this script.
import os

from paraview.simple import OpenDataFile, RenameSource, Render, Show

for _path in filter(None, os.environ.get("SCIAGENT_OPEN", "").split(os.pathsep)):
    _src = OpenDataFile(_path)
    RenameSource(os.path.basename(_path), _src)
    Show(_src)
Render()
# Tell the adapter the inputs are shown (a file in the program zone's private /tmp).
_ready = os.environ.get("SCIAGENT_READY")
if _ready:
    with open(_ready + ".part", "w") as _fh:
        _fh.write("ok\n")
    os.rename(_ready + ".part", _ready)
