"""Print the third-party requirements of pyproject.toml's extras named on the command line, one
per line: the extras that name the project itself (``pisti[sb3,tianshou]``) are expanded, and
``--base`` adds the base install's dependencies. CI installs them into a venv in the background,
then the project alone (``pip install --no-deps -e .``) in the step that uses it."""

import sys
import tomllib

project = tomllib.load(open("pyproject.toml", "rb"))["project"]
extras = project["optional-dependencies"]
name = project["name"]


def requirements(extra: str) -> list[str]:
    found = []
    for requirement in extras[extra]:
        if requirement.startswith(f"{name}["):
            for inner in requirement[len(name) + 1:].rstrip("]").split(","):
                found += requirements(inner.strip())
        else:
            found.append(requirement)
    return found


names = [a for a in sys.argv[1:] if a != "--base"]
found = list(project["dependencies"]) if "--base" in sys.argv else []
for extra in names:
    found += requirements(extra)
print(*dict.fromkeys(found), sep="\n")  # each once, in order
