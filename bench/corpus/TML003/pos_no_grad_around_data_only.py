# Modelled on: https://github.com/GT-RIPL/AlwaysBeDreaming-DFCIL/issues/9
# Report: no_grad wrapped only the input/target preparation, not the model call, so validation still took "too much memory".
import torch


def validation(model, dataloader):
    model.eval()
    acc = 0.0
    for input, target in dataloader:
        with torch.no_grad():
            input = input.cuda()
            target = target.cuda()
        output = model(input)  # expect: TML003
        acc += (output.argmax(1) == target).float().mean().item()
    return acc / len(dataloader)
