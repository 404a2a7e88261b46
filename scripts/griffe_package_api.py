"""The API reference's rule for what a package offers (a Griffe extension, read by mkdocs.yml's
mkdocstrings): the names its `__init__.py` imports under a public name, as `from minigrad.nn
import Linear` uses them. A package with `__all__` says so there, and keeps it."""

import griffe


class PackageImports(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, **kwargs: object) -> None:
        for module in [pkg, *_subpackages(pkg)]:
            if module.exports is not None:
                continue
            for name, member in module.members.items():
                if member.is_alias and not name.startswith("_") and not _is_module(member):
                    member.public = True


def _subpackages(package: griffe.Module) -> list[griffe.Module]:
    found = []
    for member in package.modules.values():
        if not member.is_alias and member.is_init_module:
            found += [member, *_subpackages(member)]
    return found


def _is_module(alias: griffe.Object | griffe.Alias) -> bool:
    try:
        return alias.is_module
    except griffe.AliasResolutionError:  # a name from outside the package (numpy): no API
        return True
