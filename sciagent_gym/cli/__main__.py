"""``python -m sciagent_gym.cli`` is the ``sciagent-gym`` command."""

import sys

from sciagent_gym.cli.main import main

sys.exit(main())
