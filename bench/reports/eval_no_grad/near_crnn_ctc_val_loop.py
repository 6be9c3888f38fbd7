# Source: https://github.com/meijieru/crnn.pytorch/blob/0f3df905d8573cca40236dba18f209c4b2358091/train.py
# Report: in this revision of the CRNN + CTC trainer, val() switches the net to eval() and runs every test batch through the network and the CTC criterion with grad enabled (no torch.no_grad(); the older crnn_main.py froze parameters with requires_grad=False instead), so each validation step builds and holds a full graph.
# Shape: the fix applied to the same val(): the batch loop runs inside `@torch.no_grad()` on the function (the decorator form of a grad-disabled context); loss kept as `loss.item()`, predictions decoded on the CPU.
# Expect: near-miss: must be silent
import pandas
import torch


@torch.no_grad()
def val(net, test_loader, criterion, converter, device, n_test_disp=10):
    net.eval()
    n_correct = 0
    val_loss = 0.0
    preds_size = sim_preds = labels = None

    for i, (images, labels) in enumerate(test_loader):
        batch_size = images.size(0)
        text, length = converter.encode(labels)
        text = torch.Tensor(text).int()
        length = torch.Tensor(length).int()
        images = images.to(device)

        preds = net(images)
        preds_size = torch.Tensor([preds.size(0)] * batch_size).int()
        loss = criterion(preds, text, preds_size, length)
        val_loss += loss.item()

        _, preds = preds.max(2)
        preds = preds.transpose(1, 0).contiguous().view(-1)
        sim_preds = converter.decode(preds.cpu().data, preds_size.data, raw=False)
        for pred, target in zip(sim_preds, labels):
            if pred == target:
                n_correct += 1

    raw_preds = converter.decode(preds.detach().cpu(), preds_size, raw=True)[:n_test_disp]
    rows = [[r, p, gt] for r, p, gt in zip(raw_preds, sim_preds, labels)]
    print(pandas.DataFrame(data=rows, columns=["network_output", "ctc_output", "ground_truth"]))

    n = len(test_loader.dataset)
    accuracy = n_correct / float(n)
    print("Test loss: %f, accuray: %f" % (val_loss / n, accuracy))
    return accuracy, val_loss / n
