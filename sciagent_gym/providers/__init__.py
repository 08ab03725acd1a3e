"""Where the program runs: ``base`` (the Provider ABC every env talks to), ``local/`` (Xvfb and
bubblewrap on this machine, the default), ``qemu/`` (one VM per env), ``remote`` (a control
server elsewhere), ``fake`` (in memory, for unit tests). Nothing is imported here."""
