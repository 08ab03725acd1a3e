# Veusz 3.6 with a state channel: run as ``python3 -I -c <this> PORT [DOCUMENT...]`` inside the
# program zone. It starts Veusz as /usr/bin/veusz would (sys.argv without the port), and
# before the main window opens a QTcpServer on 127.0.0.1:PORT, in the zone's own network
# namespace. A request is one JSON line {"nonce": N, "code": PYTHON}; the code runs on the GUI
# thread (where Veusz changes its document) with ``ci`` (a CommandInterface on the main
# window's document), ``doc`` and ``window`` at hand, and what it leaves in ``__out__`` comes
# back as one JSON line {"nonce": N, "ok": true, "out": ...} (or "ok": false with the
# traceback). Modal dialogs run nested event loops, so requests are served while one is open.
import json
import sys
import traceback

PORT = int(sys.argv[1])
sys.argv = ["veusz", *sys.argv[2:]]

from PyQt5 import QtNetwork  # noqa: E402
from veusz import veusz_main  # noqa: E402

MAX_REQUEST = 4 << 20
_clients = []


def _main_window():
    from PyQt5.QtWidgets import QApplication
    from veusz.windows.mainwindow import MainWindow

    wins = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]
    return wins[0] if wins else None


def _run(request):
    from veusz import document

    window = _main_window()
    if window is None:
        return {"ok": False, "error": "not ready: no main window yet", "retry": True}
    ns = {"ci": document.CommandInterface(window.document), "doc": window.document,
          "window": window, "__name__": "sciagent_request"}
    try:
        exec(request["code"], ns)
        return {"ok": True, "out": ns.get("__out__")}
    except BaseException:
        return {"ok": False, "error": traceback.format_exc()[-3000:]}


def _serve(sock):
    buf = bytearray()

    def ready():
        buf.extend(bytes(sock.readAll()))
        if len(buf) > MAX_REQUEST:
            sock.abort()
            return
        if b"\n" not in buf:
            return
        line = bytes(buf.split(b"\n", 1)[0])
        try:
            request = json.loads(line)
            reply = _run(request)
            reply["nonce"] = request.get("nonce")
        except ValueError as exc:
            reply = {"ok": False, "error": f"bad request: {exc}"}
        sock.write(json.dumps(reply, default=str).encode() + b"\n")
        sock.flush()
        sock.disconnectFromHost()

    def gone():
        if sock in _clients:
            _clients.remove(sock)
        sock.deleteLater()

    _clients.append(sock)
    sock.readyRead.connect(ready)
    sock.disconnected.connect(gone)


def _start_server():
    server = QtNetwork.QTcpServer()
    if not server.listen(QtNetwork.QHostAddress(QtNetwork.QHostAddress.LocalHost), PORT):
        sys.stderr.write(f"sciagent channel: cannot listen on {PORT}: "
                         f"{server.errorString()}\n")
        return None

    def accept():
        while server.hasPendingConnections():
            _serve(server.nextPendingConnection())

    server.newConnection.connect(accept)
    return server


def main():
    app = veusz_main.VeuszApp()
    server = _start_server()  # noqa: F841 (kept alive for the application's lifetime)
    app.startup()
    app.exec_()


main()
