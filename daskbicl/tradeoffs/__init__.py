"""The precision-recall tradeoff space: sweeps from stores and the pandas objects built on them."""
