"""Network-aware collectives, the decision side: which algorithm and which
tree a rooted collective (bcast, reduce, gather, scatter) should use on the
measured network, scored by the predictor against the MPI's own choice
(docs/concepts/collectives.md).

- `binding`: the engine's tree constructions, selection and rules reader.
- `tune`: decisions for an allocation (per operation, size class, root) and
  the rules file the collectives library reads (RANKWISE_COLL_RULES).
"""
