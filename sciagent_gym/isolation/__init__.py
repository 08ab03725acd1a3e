"""Isolation primitives shared by the providers' sandboxes and the evaluator's parsers:
``confinement`` (identities, resource limits, seccomp, the /etc allowed), ``bwrap``
(bubblewrap's availability and system binds) and ``sandbox_agent`` (the helper run inside a
zone, standard library only). Nothing is imported here."""
