"""The checking wing: what an answer may claim, and the checks that hold it to that.

``facts`` turns a report into the fact lines a prompt and the verifier share; ``quantities`` reads numbers
with units out of text; ``grounding`` is the set of facts an answer may cite; ``verifier`` checks every
sentence against it and ``gate`` drops sentences that fail; ``issues`` maps words to finding codes;
``untrusted`` cleans and quotes text that came from the log (data, never instructions).
"""
