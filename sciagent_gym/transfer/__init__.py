"""What the host and a guest's control server exchange, shared by both sides: ``command``
(a shell command's result) and ``files`` (bounded, symlink-safe file and tree transfer).
Standard library only: the control server imports it inside a bare guest and on Windows.
Nothing is imported here."""
