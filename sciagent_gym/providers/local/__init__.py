"""``provider="local"``: ``provider`` (LocalProvider: the active slot and the warm pool),
``slot`` (one display, window manager and two sandbox zones), ``pool`` (spares prepared ahead),
``display``, ``sandbox`` and ``sandbox_agent`` (the zones and the helper inside each),
``confinement`` and ``cgroups`` (identities, limits, seccomp). Nothing is imported here."""
