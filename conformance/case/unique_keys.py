"""A YAML loader that refuses a key written twice (a doubled line after a merge), for the
hand-kept map files (opinfo/opmap, report/coverage_map); each raises its own error class."""

from __future__ import annotations

import yaml


def unique_key_loader(error: type[Exception]) -> type[yaml.SafeLoader]:
    """A SafeLoader whose mappings raise `error("line N: `key` is listed twice")`."""

    class UniqueKeyLoader(yaml.SafeLoader):
        pass

    def mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[object, object]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node)
            if key in seen:
                raise error(f"line {key_node.start_mark.line + 1}: `{key}` is listed twice")
            seen.add(key)
        return loader.construct_mapping(node)

    UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    return UniqueKeyLoader
