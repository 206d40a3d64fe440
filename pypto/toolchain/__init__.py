"""The pinned toolchain: settings, manifests, platform facts, ptoas, logging, images and the launcher.

Floor: above ``errors`` only; read by every other room, it imports none of them.
"""
