"""``python -m sciagent_gym.server``: serve one X display over HTTP (see sciagent_gym.server)."""

from __future__ import annotations

import argparse
import ipaddress
import os
import signal
import sys
import time
from pathlib import Path


def read_token(args: argparse.Namespace) -> str:
    """The secret from --token-file (waiting up to --token-wait seconds for it to appear, as
    a guest's fw_cfg file does once its driver loads) or $SCIAGENT_TOKEN, which is then
    removed from the environment so that no command or program inherits it."""
    from sciagent_gym.server.app import read_token_file

    env_token = os.environ.pop("SCIAGENT_TOKEN", "")
    if args.token_file:
        deadline = time.monotonic() + args.token_wait
        while True:
            try:
                return read_token_file(Path(args.token_file))
            except FileNotFoundError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"no token file {args.token_file}") from None
                time.sleep(0.2)
            except (OSError, ValueError) as exc:
                raise SystemExit(f"cannot use token file {args.token_file}: {exc}") from None
    if not env_token:
        raise SystemExit("give a token: --token-file PATH or $SCIAGENT_TOKEN")
    return env_token


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sciagent_gym.server",
                                     description="Serve one X display to a sciagent-gym env.")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1; in a VM guest 0.0.0.0, "
                             "reached only through the host's loopback port forward)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--display", default=os.environ.get("DISPLAY", ""))
    parser.add_argument("--home", default=os.environ.get("HOME", ""),
                        help="the programs' home directory (a directory the server owns)")
    parser.add_argument("--work", help="task working directory (default HOME/work)")
    parser.add_argument("--tmp", help="private directory for logs and answers (default "
                                      "HOME/tmp)")
    parser.add_argument("--tool", help="tool whose state channel /tool/* serves (e.g. imagej)")
    parser.add_argument("--token-file",
                        help="file holding the token (else $SCIAGENT_TOKEN); read again when a "
                             "request's token differs, so rewriting it rotates the token")
    parser.add_argument("--token-wait", type=float, default=0.0, metavar="SECONDS",
                        help="wait this long for --token-file to appear")
    parser.add_argument("--program-user", help="run programs as this user (server as root)")
    parser.add_argument("--agent-user",
                        help="run CLI commands as this user, in namespaces of their own "
                             "without network (server as root); /health then reports "
                             "cli_isolated")
    args = parser.parse_args(argv)
    if bool(args.program_user) != bool(args.agent_user):
        parser.error("give --program-user and --agent-user together")
    if not args.display and sys.platform != "win32":
        parser.error("no X display: pass --display or set DISPLAY")
    if not args.home:
        parser.error("no home directory: pass --home")
    token = read_token(args)
    try:
        loopback = ipaddress.ip_address(args.host).is_loopback
    except ValueError:
        loopback = args.host == "localhost"
    if not loopback:
        print(f"warning: listening on {args.host}; anyone who reaches it and has the token "
              "controls this display", file=sys.stderr)

    from sciagent_gym.server.app import ControlServer
    from sciagent_gym.server.backend import make_machine

    adapter = None
    if args.tool:
        from sciagent_gym.tools import load_adapter

        adapter = load_adapter(args.tool, getters=False)
    zones = None
    if args.agent_user:
        from sciagent_gym.server.zones import UserZones

        try:
            zones = UserZones.create(args.program_user, args.agent_user)
        except ValueError as exc:
            parser.error(str(exc))
    machine = make_machine(args.display, args.home, args.work, args.tmp)
    if zones is not None:
        machine.use_zones(zones)
    server = ControlServer((args.host, args.port), machine, token, adapter,
                           token_file=args.token_file)
    def stop(*_: object) -> None:
        raise KeyboardInterrupt  # leaves serve_forever through the finally below

    signal.signal(signal.SIGTERM, stop)
    print(f"serving display {machine.display_name} ({machine.width}x{machine.height}) on "
          f"{args.host}:{server.server_address[1]}", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        machine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
