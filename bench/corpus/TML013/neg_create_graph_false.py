# Modelled on: https://github.com/f-dangel/backpack/issues/258
# Report: near-miss: backward with create_graph explicitly False.
def train(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward(create_graph=False)
        optimizer.step()
