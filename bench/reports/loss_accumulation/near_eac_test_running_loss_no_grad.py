# Source: https://github.com/zyh-uaiaaaa/Erasing-Attention-Consistency/issues/11
# Report: The facial-expression training loop summed the undetached loss into running_loss each batch, so autograd graphs piled up over the epoch until the user detached loss and predictions.
# Shape: the same repository's test() adds `running_loss += loss` exactly like the leaking train(), but the whole loop sits under torch.no_grad(), so the sum is a plain scalar tensor with no graph.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


def test(model, test_loader, device):
    with torch.no_grad():
        model.eval()
        running_loss = 0.0
        iter_cnt = 0
        correct_sum = 0
        data_num = 0
        ce = nn.CrossEntropyLoss()

        for imgs1, labels, _, _ in test_loader:
            imgs1 = imgs1.to(device)
            labels = labels.to(device)

            outputs, _ = model(imgs1)
            loss = ce(outputs, labels)

            iter_cnt += 1
            predicts = torch.max(outputs, 1)[1]
            correct_sum += torch.eq(predicts, labels).sum()
            running_loss += loss
            data_num += outputs.size(0)

        running_loss = running_loss / iter_cnt
        test_acc = correct_sum.float() / float(data_num)
    return test_acc.item(), running_loss.item()
