def write_report(*args, **kwargs):
    raise NotImplementedError
