import os

# Quiet TensorFlow's start-up logging in test output.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
