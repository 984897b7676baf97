"""The AdmissionReview seam: a body decoded once into a typed request, every answer built in one
place, and one function from a handler and a body to the answer (controller-runtime's
``pkg/webhook/admission``)."""
