# Modelled on: https://github.com/NVIDIA/apex/issues/458
# Report: the distributed fix maps every storage straight onto this process's own GPU.
import torch


def resume(args, model):
    checkpoint = torch.load(args.resume, map_location=lambda storage, loc: storage.cuda(args.gpu))
    model.load_state_dict(checkpoint["state_dict"])
    return checkpoint["epoch"]
