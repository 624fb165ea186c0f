"""Simulation of a scheduler running a fleet: policies, scenarios, the engine and its ledger.

(The package is named ``simulation`` so that it never shadows the public
function ``calsim.simulate``.)
"""
