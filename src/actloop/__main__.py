"""`python -m actloop`: the command line."""

from actloop.cli import main

raise SystemExit(main())
