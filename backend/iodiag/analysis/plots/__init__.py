"""Plot data: the series the UI and the HTML export draw (``data``), and the zoomed timeline window
(``timeline_window``). Built from views; never judged by a check.
"""
