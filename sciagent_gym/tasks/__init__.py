"""Tasks: ``spec`` (a task_specs/<tool>/*.json file, parsed and validated), ``task`` (one seeded
variant: parameters, staged inputs, split), ``templating`` (parameters into the spec's text and
criteria), ``steps`` (oracles, negatives and cheats played as env steps)."""
