#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        # A bad environment is the operator's to fix: one line naming the variable.
        sys.stderr.write(f"ffkv: configuration error: {exc}\n")
        sys.exit(2)


if __name__ == "__main__":
    main()
