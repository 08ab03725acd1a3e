"""``provider="qemu"``: each env's tool runs in its own QEMU virtual machine.

``provider`` (the env-facing provider), ``vm`` (one VM; ``qmp`` its monitor client, ``accel``
KVM or TCG) and the guest images they boot: ``recipe`` (what goes in an image), ``build`` and
``stages`` (making one; ``mirror`` the Debian mirror, ``rootfs`` the guest's files) and
``store`` (where built images live). Nothing is imported here, so that importing one module
does not import the others.
"""
