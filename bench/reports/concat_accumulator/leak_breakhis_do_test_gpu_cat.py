# Source: https://github.com/lizbaka/BreakHis-exp/blob/19bdee046fa3401db4c57891e134e2e6c50404cd/test.py
# Report: do_test() for the BreakHis histology classifier grows three CUDA tensors (predictions, labels, logits) with torch.cat inside the test loop, so every batch copies the whole accumulated set again and the peak is twice the accumulator
# Shape: a test helper that optionally restores a checkpoint dict, keeps the mean loss as a float, and returns (loss, labels, preds, logits) for the metrics code; the forward is under no_grad
# Expect: TML008 line 36; TML008 line 37; TML008 line 38
import torch
from sklearn.metrics import classification_report
from tqdm import tqdm

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


def load_weights(model, ckpt_path):
    ckpt = torch.load(ckpt_path, map_location=device)
    model.load_state_dict(ckpt["model_state_dict"])


def do_test(model, test_loader, ckpt_path=None, loss_criterion=None):
    if ckpt_path:
        load_weights(model, ckpt_path)
    model.to(device)

    batch_count = 0
    loss = 0.0
    pred_all = torch.tensor([], device=device)
    label_all = torch.tensor([], device=device)
    output_all = torch.tensor([], device=device)
    model.eval()
    with torch.no_grad():
        for images, labels in tqdm(test_loader):
            images, labels = images.to(device), labels.to(device)
            outputs = model(images)
            if loss_criterion:
                loss += loss_criterion(outputs, labels).item()
                batch_count += 1
            pred = outputs.argmax(dim=1)
            pred_all = torch.cat((pred_all, pred), dim=0)  # expect: TML008
            label_all = torch.cat((label_all, labels), dim=0)  # expect: TML008
            output_all = torch.cat((output_all, outputs), dim=0)  # expect: TML008
    if loss_criterion and batch_count > 0:
        loss /= batch_count
    return loss, label_all, pred_all, output_all


def report(model, test_loader, class_names, ckpt_path=None):
    criterion = torch.nn.CrossEntropyLoss()
    loss, labels, preds, logits = do_test(model, test_loader, ckpt_path, criterion)
    probs = torch.softmax(logits, dim=1).cpu()
    print(f"test loss {loss:.4f}")
    print(classification_report(labels.long().tolist(), preds.long().tolist(), target_names=class_names))
    return probs
