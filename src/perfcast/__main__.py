"""`python -m perfcast ...`: the command line, where no `perfcast` script is installed (a GPU machine with PYTHONPATH)."""

from perfcast.cli import main

main()
