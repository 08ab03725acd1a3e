# ruff: noqa: E401, I001, F821, B007, UP031  (the adapter puts in the ports: see Adapter._request)
import sys, time, xmlrpc.client
path, code = sys.argv[1], sys.argv[2]
with open(path, "w") as fh:
    fh.write(code)
last = None
for attempt in range(200):  # PyMOL may still be starting: retry for about 20 s
    for port in range(PORT_FROM, PORT_TO):
        try:
            xmlrpc.client.ServerProxy("http://127.0.0.1:%d" % port).do("run " + path, 0, 0)
            sys.exit(0)
        except OSError as exc:
            last = exc
    time.sleep(0.1)
sys.exit("PyMOL XML-RPC not reachable: %s" % last)
