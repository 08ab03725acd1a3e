# ruff: noqa: E401, I001  (run as ``python3 -I -S -c``: see Adapter.launch_argv)
import os, socket, subprocess, sys, time
source, db, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
xterm = sys.argv[sys.argv.index("--") + 1:]
folder = os.path.join(os.environ.get("TMPDIR", "/tmp"), "optimade")
os.makedirs(folder, exist_ok=True)
server = os.path.join(folder, "optimade_server.py")
with open(server, "w") as fh:
    fh.write(source)
log = open(os.path.join(folder, "server.log"), "ab")
subprocess.Popen(["/usr/bin/python3", "-I", "-S", server, db, "--port", str(port)],
                 stdin=subprocess.DEVNULL, stdout=log, stderr=log)
deadline = time.monotonic() + 120
while True:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        break
    except OSError:
        if time.monotonic() > deadline:
            sys.exit("the OPTIMADE server did not start; see " + folder + "/server.log")
        time.sleep(0.05)
os.execvp(xterm[0], xterm)
