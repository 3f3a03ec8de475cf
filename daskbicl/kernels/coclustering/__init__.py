"""Co-clustering kernels: contingency counting, partition scores, information, pairs, label codes."""
