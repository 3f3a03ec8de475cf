"""Helpers shared by the tests: oracles, strategies, damaged stores, manifests, the loopback S3 server."""
