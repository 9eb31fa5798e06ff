"""The intent wing: what kind of question was asked.

``classify`` routes a question to an intent (rules first, then the small trained model); ``model`` is that
model, trained from ``examples`` at install time and loaded offline.
"""
