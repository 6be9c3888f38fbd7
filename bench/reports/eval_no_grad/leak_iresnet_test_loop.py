# Source: https://github.com/jhjacobsen/invertible-resnet/issues/15
# Report: test() ran the i-ResNet over the whole test set after model.eval() but without torch.no_grad (inputs even marked requires_grad), so evaluation OOMed when several classifiers shared a GPU
# Shape: test() with model.eval(), a density-estimation branch and a classification branch, both calling the model with no grad-disabled context
# Expect: TML003 line 25; TML003 line 31
import os

import torch
from torch.autograd import Variable


def bits_per_dim(logpx, inputs):
    return -logpx / (inputs[0].numel() * torch.log(torch.tensor(2.0))) + 8.0


def test(best_result, args, model, epoch, testloader, use_cuda, test_log):
    model.eval()
    objective = 0.
    total = 0
    for batch_idx, (inputs, targets) in enumerate(testloader):
        if use_cuda:
            inputs, targets = inputs.cuda(), targets.cuda()
        inputs, targets = Variable(inputs, requires_grad=True), Variable(targets)

        if args.densityEstimation:
            z, logpz, trace = model(inputs)  # expect: TML003
            logpx = logpz + trace
            loss = bits_per_dim(logpx, inputs)
            objective += -loss.cpu().sum().item()
            del z, logpz, trace, logpx, loss
        else:
            out, out_bij = model(inputs)  # expect: TML003
            _, predicted = torch.max(out.data, 1)
            objective += predicted.eq(targets.data).sum().item()
            del out, out_bij, _, predicted

        total += targets.size(0)
        del inputs, targets

    objective = float(objective) / float(total)
    print("\n| Validation Epoch #%d\t\t\tobjective =  %.4f" % (epoch, objective), flush=True)
    if objective > best_result:
        torch.save({"model": model, "objective": objective, "epoch": epoch},
                   os.path.join(args.save_dir, "checkpoint.t7"))
        best_result = objective
    test_log.write("{} {}\n".format(epoch, objective))
    test_log.flush()
    return best_result
