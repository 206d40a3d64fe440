"""The grammar of a container image reference, checked before any engine sees one.

``[HOST[:PORT]/]PATH[:TAG][@DIGEST]`` as the distribution reference defines it: PATH is ``/``-separated
components of lower-case letters and digits joined by ``.``, ``_``, ``__`` or dashes; TAG is up to 128
of ``[A-Za-z0-9_.-]`` not starting with ``.`` or ``-``; DIGEST is ``ALGORITHM:HEX`` (32+ hex digits).
An image id (``sha256:<64 hex>``, or a short hex prefix) is accepted too. At most 255 characters in the
name part. Anything else (spaces, ``;``, upper-case paths, empty) is refused with this grammar, not
sent to the engine.
"""

from __future__ import annotations

import re

_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN_PART = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_PART}(?:\.{_DOMAIN_PART})*|\[[0-9a-fA-F:.]+\])(?::[0-9]+)?"
_PATH = rf"{_COMPONENT}(?:/{_COMPONENT})*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
REFERENCE = re.compile(rf"^(?P<name>(?:(?P<domain>{_DOMAIN})/)?{_PATH})(?::{_TAG})?(?:@{_DIGEST})?$")
IMAGE_ID = re.compile(r"^(?:sha256:)?[0-9a-f]{12,64}$")
NAME_MAX = 255
GRAMMAR = "[HOST[:PORT]/]NAME[:TAG][@sha256:DIGEST] (NAME: lower-case letters, digits and . _ - separators)"


def reference_problem(ref: str) -> str | None:
    """Why ``ref`` is not an image reference or id, or None when it is one."""
    if IMAGE_ID.match(ref):
        return None
    match = REFERENCE.match(ref)
    if match is None:
        return f"'{ref}' is not an image reference: expected {GRAMMAR}"
    domain = match.group("domain")
    if domain and not any(c in domain for c in ".:[") and domain != "localhost" and domain != domain.lower():
        # engines read a first component without '.', ':' or 'localhost' as part of the path: lower case only
        return f"'{ref}' is not an image reference: the repository name must be lower case ({GRAMMAR})"
    if len(match.group("name")) > NAME_MAX:
        return (f"'{ref[:40]}...' is not an image reference: its name is longer than {NAME_MAX} characters "
                f"(expected {GRAMMAR})")
    return None
