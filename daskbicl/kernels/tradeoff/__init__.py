"""The tradeoff space maths: weighted precision-recall indices and envelopes."""
