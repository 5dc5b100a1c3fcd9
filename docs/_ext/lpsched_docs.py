"""Two touches of lpsched's documentation site, as a Sphinx extension (``docs/conf.py`` loads it).

* **Readable values in the API pages.** autodoc writes a module constant's value with Sphinx's
  own ``object_description``, which lists a ``dict`` item by item and ignores its ``repr``: the
  registries (:class:`lpsched.plugins.Registry`, a ``dict`` of functions) showed as
  ``{'cpsat': <function solve_mip>, 'highs': <function solve_mip>}``, and the default of a
  function-valued field as ``<function _sees_nothing>``. After reading a page, every signature
  shows a function or class by its name, a registry by its ``repr`` (its kind and its names)
  and a long mapping by its keys (:func:`readable_value`).
* **Tables that scroll instead of squeezing.** Furo puts a wide table in a scrolling box, but
  the browser first shrinks every column to fit the page, so that a results table wrapped each
  cell over several lines. Short cells (numbers, names, ``mean / max`` pairs) get the class
  ``lp-nowrap`` (no wrapping, ``_static/lpsched.css``); long prose cells still wrap. The
  results pages, whose tables are widest, get a content area as wide as the window allows.

Source: ours.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from typing import Any

from docutils import nodes
from sphinx import addnodes

from lpsched.plugins import Registry

#: A cell of at most this many characters does not wrap.
NOWRAP_CHARS = 48
#: Pages (docnames starting so) whose tables are wide: their content area takes the window.
WIDE_FOLDERS = ("results/",)
#: A mapping whose value text is longer than this is shown by its keys alone.
LONG_MAPPING_CHARS = 160

_FUNCTION = re.compile(
    r"<(?:function|built-in function|bound method) ([\w.<>]+?)(?: at 0x[0-9a-f]+)?>"
)
_CLASS = re.compile(r"<class '(?:[\w]+\.)*(\w+)'>")
_OBJECT = re.compile(r"<([\w.]+) object at 0x[0-9a-f]+>")


def clean_text(text: str) -> str:
    """``text`` with every ``<function f>`` written ``f``, ``<class 'a.b.C'>`` written ``C``,
    ``<a.b.C object at 0x...>`` written ``C(...)`` and ``functools.partial`` ``partial``."""
    text = _FUNCTION.sub(lambda m: m.group(1).rsplit(".", 1)[-1], text)
    text = _CLASS.sub(r"\1", text)
    text = _OBJECT.sub(lambda m: m.group(1).rsplit(".", 1)[-1] + "(...)", text)
    return text.replace("functools.partial(", "partial(")


def readable_value(obj: Any, shown: str) -> str:
    """The value text of a documented constant: ``repr(obj)`` for a :class:`Registry`, the keys
    of a mapping whose text ``shown`` (Sphinx's) is long, else ``shown`` cleaned
    (:func:`clean_text`)."""
    if isinstance(obj, Registry):
        return repr(obj)
    text = clean_text(shown)
    if isinstance(obj, Mapping) and len(text) > LONG_MAPPING_CHARS:
        return "{" + ", ".join(f"{key!r}: ..." for key in obj) + "}"
    return text


def _documented(signature: addnodes.desc_signature) -> tuple[bool, Any]:
    """The object a signature documents: ``(True, obj)``, or ``(False, None)`` when it does not
    import."""
    try:
        obj: Any = importlib.import_module(signature["module"])
        for part in signature["fullname"].split("."):
            obj = getattr(obj, part)
    except (KeyError, ImportError, AttributeError):
        return False, None
    return True, obj


def _value_annotation(signature: addnodes.desc_signature) -> nodes.Text | None:
    """The text node holding the value in ``NAME = VALUE``, if the signature shows one."""
    for annotation in signature.findall(addnodes.desc_annotation):
        if annotation.astext().lstrip().startswith("="):
            texts = list(annotation.findall(nodes.Text))
            return texts[-1] if texts else None
    return None


def readable_signatures(app: Any, doctree: nodes.document) -> None:
    """``doctree-read``: the values and defaults of the signatures in readable form."""
    for desc in doctree.findall(addnodes.desc):
        for signature in desc.findall(addnodes.desc_signature):
            value = _value_annotation(signature) if desc.get("objtype") == "data" else None
            if value is not None:
                found, obj = _documented(signature)
                text = readable_value(obj, str(value)) if found else clean_text(str(value))
                value.parent.replace(value, nodes.Text(text))
            for text_node in list(signature.findall(nodes.Text)):
                cleaned = clean_text(str(text_node))
                if cleaned != str(text_node):
                    text_node.parent.replace(text_node, nodes.Text(cleaned))


def nowrap_short_cells(app: Any, doctree: nodes.document) -> None:
    """``doctree-read``: the class ``lp-nowrap`` on every table cell of at most
    :data:`NOWRAP_CHARS` characters."""
    for table in doctree.findall(nodes.table):
        for entry in table.findall(nodes.entry):
            if len(entry.astext()) <= NOWRAP_CHARS:
                entry["classes"].append("lp-nowrap")


def wide_results_pages(app: Any, doctree: nodes.document) -> None:
    """``doctree-read``: the class ``lp-wide`` on the sections of the pages of
    :data:`WIDE_FOLDERS`, whose content area ``_static/lpsched.css`` widens to the window."""
    if app.env.docname.startswith(WIDE_FOLDERS):
        for section in doctree.findall(nodes.section):
            section["classes"].append("lp-wide")


def setup(app: Any) -> dict[str, Any]:
    """Register the ``doctree-read`` handlers."""
    app.connect("doctree-read", readable_signatures)
    app.connect("doctree-read", nowrap_short_cells)
    app.connect("doctree-read", wide_results_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
