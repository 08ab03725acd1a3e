"""What is run over envs rather than inside one: ``rollout`` (baseline policies, run
directories), ``replay``, ``reports``, ``minari_export``, ``audit`` and ``audit_summary`` (every
task proven), ``cheats`` and ``attacks`` (what a hostile agent tries), ``bench`` (speed),
``state_control``. The CLI's commands call these."""
