"""ClimateCheck 2025 (claim -> abstracts, Recall@2/5/10 + Bpref; Supports/Refutes/NEI labels): the retrieval and
verification tasks, the official scorer's replica, the gold and run formats, the submission rules and ClimateCheck's
Bpref, registered through entry points as a plugin task is."""
