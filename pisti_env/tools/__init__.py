"""Tools on the environments: command-line flags and checks (`flags`), `pisti-demo` (`demo`),
the replay format (`replay`) and what produced a result (`versions`).
"""
