"""AMIDE 1.0.6 (Debian package ``amide``): medical image volumes, ROIs and their statistics."""
