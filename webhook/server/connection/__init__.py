"""Each HTTP/1.1 connection of ``webhook serve``: uvicorn's httptools protocol with its heads
bounded (``heads``), its timeouts and its part in the drain (``protocol``), the webhook requests
it answers itself (``exchanges``, deciding at once: ``eager``) and the limits it applies (``limits``)."""
